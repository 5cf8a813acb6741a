#!/bin/bash
#PHX --job-name=native
#PHX --gpus-per-node=2
#PHX --time=20
# expect: name=native gpus_per_node=2 time_limit_s=1200
python quick.py
