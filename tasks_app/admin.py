"""Django admin for tasks and items. Gold is shown to admins only (the admin site is staff-only)."""
from django.contrib import admin

from .models import Item, ItemGold, Task


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "language", "mteb_task_name", "mteb_subset", "sample_size", "created_at")
    list_filter = ("kind", "language")
    search_fields = ("name", "mteb_task_name")


class ItemGoldInline(admin.StackedInline):
    model = ItemGold
    extra = 0


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "task", "position", "in_sample")
    list_filter = ("task", "in_sample")
    search_fields = ("external_id", "uid")
    list_select_related = ("task",)
    inlines = [ItemGoldInline]
    raw_id_fields = ("task",)
