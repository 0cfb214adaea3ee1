"""What every part of annotation/ builds on: annotators, batches, assignments and answers (the models), the
assignment engine and its prepared SQL, access to an annotator's work, progress, the signals later apps connect,
and the annotator's loop (its pages and forms), which the crowd's pages reuse. It imports no other part of
annotation/ (docs/architecture.md, "The floor plan")."""
