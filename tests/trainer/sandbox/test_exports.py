import trainer.sandbox


def test_all_lists_exactly_the_public_names() -> None:
    public = {name for name in dir(trainer.sandbox) if not name.startswith("_")}
    assert sorted(trainer.sandbox.__all__) == sorted(public)
