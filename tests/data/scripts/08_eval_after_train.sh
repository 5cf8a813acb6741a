#!/bin/bash
#SBATCH --job-name=eval
#SBATCH --dependency=singleton
#SBATCH --gpus=1
#SBATCH --time=00:45:00
# expect: name=eval dependency=singleton gpus=1 time_limit_s=2700
python evaluate.py --checkpoint last.pt
