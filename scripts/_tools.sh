# Sourced by scripts/_venv.sh: command-line tools the tests run besides the venv's.
# promtool (Debian's prometheus package) lints the /metrics scrape in tests/e2e/test_metrics.py.
if ! command -v promtool >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing promtool (Debian package prometheus)" >&2
        # Another set-up on this machine may hold dpkg's lock: wait for it, do not fail.
        apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
            --no-install-recommends prometheus >/dev/null
    else
        echo "hint: install promtool for the /metrics lint test" \
            "(sudo apt-get install --no-install-recommends prometheus), or put it in PATH" >&2
    fi
fi
