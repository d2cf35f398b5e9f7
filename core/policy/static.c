/* numalot: static: pin every thread where it starts (or the first free CPU
 * it may use), never move it (docs/algorithms.md, "Taking over"). */
#include "policy_priv.h"

const struct nl_policy_hooks nl_static_hooks = {
	.pins_all = 1,
};
