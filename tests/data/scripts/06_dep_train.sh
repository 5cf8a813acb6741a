#!/bin/bash
#SBATCH --job-name=train
#SBATCH --dependency=afterok:12345
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --time=1-00:00:00
# expect: name=train dependency=afterok:12345 nodes_min=2 gpus_per_node=8 time_limit_s=86400
srun python train.py --data /data/tokens
