import safeagents


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(safeagents) if not name.startswith("_")}
    public -= {
        "analysis",
        "cli",
        "console",
        "demo",
        "detectors",
        "exchange",
        "intercept",
        "plugins",
        "protocols",
        "proxy",
        "rules",
        "scripted",
        "store",
        "toolkit",
    }
    assert sorted(safeagents.__all__) == sorted(public)


def test_exports_present_as_safeagents() -> None:
    for name in safeagents.__all__:
        value = getattr(safeagents, name)
        if isinstance(value, type):
            assert value.__module__ in ("safeagents", "safeagents.rules"), name
