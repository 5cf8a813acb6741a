#!/bin/bash
#SBATCH --job-name=resumable
#SBATCH --requeue
#SBATCH --signal=B:USR1@300
#SBATCH --gres=gpu:4
#SBATCH --time=4:00:00
# expect: name=resumable requeue=1 signal_num=10 signal_time_s=300 signal_batch_only=1 gpus_per_node=4
trap 'echo "checkpointing"; touch ckpt.requested; scontrol requeue $SLURM_JOB_ID' USR1
python train.py --resume-if-possible &
wait
