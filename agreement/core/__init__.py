"""The report: what the kinds' scorers share (scoring), the report job (queue, claim and run, building the document,
its typed keys), loading the answers, exclusions, the exports and the one LaTeX escape. The floor every other part
of agreement/ builds on; it imports none of them (docs/architecture.md, "The floor plan")."""
