#!/bin/bash
# Written by `safeagents tasks generate`: the checks are in check.py, next to this script.
exec python "$(dirname "$0")/check.py"
