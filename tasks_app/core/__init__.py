"""What every part of tasks_app/ builds on: tasks, items, hidden gold and import jobs (the models), the app's view of
the kind registry and the limits an import checks. It imports no other part of tasks_app/ (docs/architecture.md,
"The floor plan")."""
