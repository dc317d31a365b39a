"""``python -m portsim``: the command line, as the ``portsim`` script."""

from portsim.scenarios.cli import main

if __name__ == "__main__":
    main()
