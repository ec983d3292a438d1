import safeagents.exchange


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(safeagents.exchange) if not name.startswith("_")}
    public.discard("annotations")  # from __future__
    assert sorted(safeagents.exchange.__all__) == sorted(public)
    for name in safeagents.exchange.__all__:
        assert getattr(safeagents.exchange, name) is not None, name


def test_no_front_end_is_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys, safeagents.exchange; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'mitmproxy', 'uvicorn') or m.startswith('safeagents.proxy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
