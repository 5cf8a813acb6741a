#!/bin/sh
#SBATCH -a 1,3,5,7
#SBATCH -J shards
#SBATCH -t 30
# expect: array=1,3,5,7 name=shards time_limit_s=1800
python preprocess.py --shard "$SLURM_ARRAY_TASK_ID" --of "$SLURM_ARRAY_TASK_COUNT"
