#!/bin/sh
# Lab 12's check for `make check` (run from the top of the build tree).
exec "${srcdir:-.}/exercises/12-real-program/ladder.sh" --check
