#!/bin/bash
#SBATCH -J mixed
#PHX -t 45
#SBATCH -t 30
# The later line wins: #SBATCH -t 30 comes after #PHX -t 45.
# expect: name=mixed time_limit_s=1800
python mixed.py
