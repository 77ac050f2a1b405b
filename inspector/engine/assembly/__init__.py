"""One call's assembly: the default assembler plugin (:mod:`.assembler`), the two paths it picks
between (:mod:`.reference`, :mod:`.incremental`, with the index the latter keeps, :mod:`.row_index`),
what both start from (:mod:`.call`) and what both return (:mod:`.records`)."""
