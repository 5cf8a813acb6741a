#!/bin/bash
#SBATCH -J chain-driver
#SBATCH -t 5
#SBATCH --cpus-per-task=1
# expect: name=chain-driver time_limit_s=300 cpus_per_task=1
# A driver that submits a dependency chain, as workflow scripts do.
pre=$(sbatch --parsable 05_dep_preprocess.sh)
train=$(sbatch --parsable --dependency=afterok:"$pre" 06_dep_train.sh)
sbatch --dependency=afterany:"$train" 08_eval_after_train.sh
