#!/bin/bash
#SBATCH --begin=now+1hour
#SBATCH -J nightly
#SBATCH -t 30
# expect: name=nightly begin_s=1796222330
./nightly_report.sh
