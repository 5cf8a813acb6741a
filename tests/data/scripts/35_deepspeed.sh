#!/bin/bash
#SBATCH --job-name=ds-zero3
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=12
#SBATCH --mem-per-gpu=100G
#SBATCH --time=23:59:00
# expect: name=ds-zero3 nodes_min=2 ntasks_per_node=8 gpus_per_task=1 cpus_per_task=12
# expect: mem_per_gpu_mib=102400 time_limit_s=86340
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
srun python -u train_ds.py --deepspeed ds_config.json
