#!/bin/bash
#SBATCH --job-name=lr-sweep
#SBATCH --array=0-15%4
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time=04:00:00
#SBATCH --output=sweep/%A_%a.out
#SBATCH --error=sweep/%A_%a.err
# expect: name=lr-sweep array=0-15%4 gpus_per_node=1 cpus_per_task=8 time_limit_s=14400
# expect: stdout_path=sweep/%A_%a.out stderr_path=sweep/%A_%a.err
LRS=(1e-5 2e-5 5e-5 1e-4 2e-4 5e-4 1e-3 2e-3 5e-3 1e-2 2e-2 5e-2 1e-1 2e-1 5e-1 1.0)
python train.py --lr "${LRS[$SLURM_ARRAY_TASK_ID]}" --seed "$SLURM_ARRAY_TASK_ID"
