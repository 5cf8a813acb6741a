#!/bin/bash
#SBATCH --nice=100
#SBATCH -J background
#SBATCH -t 1-0
# expect: nice=100 time_limit_s=86400 name=background
python background_eval.py
