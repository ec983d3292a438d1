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


def test_the_httptools_client_is_the_transport() -> None:
    from safeagents.exchange import Client, ProxyConfig, Transport, Upstream

    client: Transport = Client(timeout=1.0, connect_timeout=1.0)  # checked by mypy
    upstream = Upstream(ProxyConfig(upstream="http://127.0.0.1:1"), client)
    assert upstream.client is client
    assert isinstance(Upstream(ProxyConfig(upstream="http://127.0.0.1:1")).client, Client)
