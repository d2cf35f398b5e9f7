/* numalot: monitor: observe and report, never pin or move a thread. */
#include "policy_priv.h"

const struct nl_policy_hooks nl_monitor_hooks = {
	.observes = 1,
};
