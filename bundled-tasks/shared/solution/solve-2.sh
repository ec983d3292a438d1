#!/bin/bash
# The oracle: the value the repository's code computes.
cp "$(dirname "$0")/answer.txt" answer.txt
