#!/usr/bin/env bash
# Run a sweep as a Slurm job array of 8 shards, then merge:
#   sbatch scenarios/sweeps/slurm-array.sh
#   # when all tasks are done:
#   build/bin/bubblesim merge -o sweep.csv sweep-part-*.csv
# Each task runs the deterministic slice SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT (bubblesim
# reads both variables when --shard is not given); a task that is re-run with --resume keeps the
# rows it already wrote.
#SBATCH --job-name=bubblesim-sweep
#SBATCH --array=0-7
#SBATCH --cpus-per-task=8
#SBATCH --time=00:30:00
#SBATCH --output=sweep-%a.log
set -euo pipefail
build/bin/bubblesim sweep scenarios/sweeps/large.yaml --jobs "${SLURM_CPUS_PER_TASK:-1}" --resume \
  -o "sweep-part-${SLURM_ARRAY_TASK_ID}.csv"
