#!/bin/bash
# The oracle: the repository's original files.
cp -r "$(dirname "$0")/files/." .
