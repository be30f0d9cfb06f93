#!/usr/bin/env bash
# placeholder (issue 27)
