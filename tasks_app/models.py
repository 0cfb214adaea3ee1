"""The models of the app `tasks_app`, where Django reads them (defined in tasks_app/core/models.py). The app's root
is its top floor, so this module may import every floor below it; code below the root imports the defining
module."""
from tasks_app.core.models import ImportJob, Item, ItemCheck, ItemGold, Task  # noqa: F401
