#!/bin/bash
#SBATCH -t 1-12:00:00
# expect: time_limit_s=129600
sleep 1
