/*
 * numalot: every policy, one row each, read with NL_POLICY(ID, name, where,
 * about, hooks) defined; docs/architecture.md, "Adding a policy", says
 * what each column gives. The enum follows the row order.
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
