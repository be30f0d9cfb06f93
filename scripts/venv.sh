# Sourced by the scripts: the virtual environment they own (install-deps.sh fills it), FLASHPROOF_VENV
# or ~/.cache/flashproof/venv. venv_activate puts its bin/ first on PATH, so python3, pip and the
# scripts' `#!/usr/bin/env python3` (sass-report and its disassembler wheels) use it, and CMake's
# FindPython finds it (VIRTUAL_ENV).
FLASHPROOF_VENV=${FLASHPROOF_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/flashproof/venv}
export FLASHPROOF_VENV

venv_activate() {
  [ -x "$FLASHPROOF_VENV/bin/python" ] || return 0
  export VIRTUAL_ENV=$FLASHPROOF_VENV
  case ":$PATH:" in
    *":$FLASHPROOF_VENV/bin:"*) ;;
    *) export PATH="$FLASHPROOF_VENV/bin:$PATH" ;;
  esac
}
