/*
 * numalot: every policy, one row each (docs/architecture.md, "Adding a
 * policy"). Read with NL_POLICY(ID, name, where, about, hooks) defined:
 * ID names NL_POLICY_<ID>; where says who may choose it (NL_POLICY_JOBS:
 * Slurm jobs and the agent too, not only numalot run/attach/sim;
 * NL_POLICY_PAPER: numalot bench and sim also run it as <name>-paper,
 * under profile=paper); about is its line in --numalot=help; hooks is
 * the struct nl_policy_hooks its file defines. The enum follows the row
 * order; names are listed sorted.
 */
NL_POLICY(MONITOR, "monitor", NL_POLICY_JOBS, "observe and report only",
	  nl_monitor_hooks)
NL_POLICY(STATIC, "static", 0, "pin every thread where it starts",
	  nl_static_hooks)
NL_POLICY(IMAR2, "imar2", NL_POLICY_JOBS | NL_POLICY_PAPER,
	  "IMAR2: move under-performing threads, roll back moves that hurt",
	  nl_imar2_hooks)
NL_POLICY(LBMA, "lbma", NL_POLICY_JOBS | NL_POLICY_PAPER,
	  "LBMA: lottery-based migration of random threads", nl_lbma_hooks)
