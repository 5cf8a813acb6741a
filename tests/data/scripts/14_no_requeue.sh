#!/bin/bash
#SBATCH --no-requeue
#SBATCH -J oneshot
#SBATCH -t 15
# expect: requeue=0 no_requeue_given=1 name=oneshot
./run_once.sh
