"""The PPI maths a campaign uses, imported in this one place (docs/ppi.md): the PPI++ estimate and λ, the
anytime-valid confidence sequence, and the uniform planner's assurance margin.

They live in agreement/ppi/ today and are pure (numpy and SciPy, no Django); when they move under measures/
(issue 38's folders), only these import lines change. tests/test_import_direction.py allows this one module, and
only these modules, as measures/'s bridge to them.
"""
from __future__ import annotations

from agreement.ppi.estimates import Sample, correlation, estimate, power_tuned_lambda, z_value
from agreement.ppi.planner import DEFAULT_ASSURANCE
from agreement.ppi.sequence import BET_SHARE, Sequence, confidence_sequence

__all__ = ["BET_SHARE", "DEFAULT_ASSURANCE", "Sample", "Sequence", "confidence_sequence", "correlation", "estimate",
           "power_tuned_lambda", "z_value"]
