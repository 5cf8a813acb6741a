#!/bin/bash
#SBATCH --time=90
# expect: time_limit_s=5400
sleep 1
