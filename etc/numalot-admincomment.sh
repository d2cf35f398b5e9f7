#!/bin/sh
# numalot: a job's totals into its AdminComment in Slurm's accounting, as
# jobstats does, from the site copies of its reports (plugstack
# report_dir=, on storage the controller sees). Run it as slurmctld's
# EpilogSlurmctld (or from it): it reads SLURM_JOB_ID, and
# SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID for an array's task
# (docs/slurm.md, "Site collection").
#
#   NUMALOT_REPORT_DIR=/shared/numalot numalot-admincomment.sh
#
# The comment is "numalot:" and the totals as compact JSON (numalot report
# --json); it replaces what AdminComment held. sacct -o AdminComment shows
# it. Needs numalot, jq and sacctmgr (slurmdbd); does nothing for a job
# without reports.
set -eu
dir=${NUMALOT_REPORT_DIR:-/var/log/numalot}
job=${SLURM_JOB_ID:?SLURM_JOB_ID is not set (run me as EpilogSlurmctld)}
numalot=${NUMALOT:-numalot}
set -- "$dir"/numalot-"$job".*.json
[ -e "$1" ] || exit 0
totals=$("$numalot" report --json "$@" | jq -c '.jobs[0].totals') || exit 0
[ -n "$totals" ] && [ "$totals" != null ] || exit 0
# An array's task is known to the accounting as ARRAYJOB_TASK.
id=$job
if [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
	id=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
fi
exec sacctmgr -i update job where jobid="$id" set AdminComment="numalot:$totals"
