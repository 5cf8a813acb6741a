#!/bin/bash
#SBATCH --export=NONE
#SBATCH -t 5
# expect: export=NONE time_limit_s=300
env | sort
