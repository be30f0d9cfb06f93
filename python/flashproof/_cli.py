"""The console command `flashproof` that the package installs (pyproject.toml, [project.scripts]):
the C++ command line itself (cli/entry.h), inside the extension module, so `flashproof list`,
`check`, `replay`, `prove`, `fuzz`, `report` and `export` behave and exit (0/1/2/3) as the
CMake-built binary does (docs/spec.md, "The command line")."""
import signal
import sys


def main(argv=None):
    """Runs `flashproof ARGS` (ARGS: argv, default sys.argv[1:]) and exits with its status."""
    args = sys.argv[1:] if argv is None else list(argv)
    # As the native binary: Ctrl-C ends the command at once (Python would only set a flag that is
    # read after the C++ returns), and writing to a closed pipe (`flashproof list | head -1`) ends
    # it quietly.
    for name in ("SIGINT", "SIGPIPE"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    from . import _core
    sys.exit(_core.main(args))


if __name__ == "__main__":
    main()
