/*
 * numalot SPANK plugin: its lines in Slurm's logs (slurmd's, the step's,
 * srun's stderr), every control character escaped (\xNN): a job's strings
 * in them (a report's pattern, its job name, its working folder, a value
 * of an option) never forge a line of root's log (docs/slurm.md,
 * "Security"). Include it last: slurm_error and slurm_info are poisoned
 * after it, so that no line goes around it.
 */
#ifndef NUMALOT_SLOG_H
#define NUMALOT_SLOG_H

void nl_slurm_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nl_slurm_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifndef NL_SLOG_IMPL
#pragma GCC poison slurm_error slurm_info slurm_verbose slurm_debug
#endif

#endif
