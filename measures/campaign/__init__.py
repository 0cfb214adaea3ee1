"""A measurement campaign's statistical core (no Django): a judge has a number on every item of a pool, people
label uniformly drawn batches, and the campaign re-estimates after each batch until the pool's mean is known to
a target half-width or the budget is spent (docs/campaigns.md).

`engine.py` plans the first batch from the judge alone, reviews the labels after each batch (stop, or the size of
the next batch) and draws batches; `sequence_widths.py` projects the anytime-valid sequence's half-width, for the
plans and for what people alone would need; both build on the PPI maths of `measures/ppi/`.
"""
