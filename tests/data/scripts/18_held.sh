#!/bin/bash
#SBATCH -H
#SBATCH -J waits-for-data
#SBATCH -t 20
# expect: hold=1 name=waits-for-data
python ingest.py
