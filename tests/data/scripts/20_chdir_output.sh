#!/bin/bash
#SBATCH -D /tmp
#SBATCH --output=%x-%j.out
#SBATCH --error=%x-%j.err
#SBATCH -J where
#SBATCH -t 5
# expect: workdir=/tmp stdout_path=%x-%j.out stderr_path=%x-%j.err name=where
pwd
