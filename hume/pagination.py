"""The API's page size: `?limit=` as the client likes, up to a cap (a request for 100,000 rows returned 31 MB
and grew the server by 600 MB). Over the cap a request gets the cap, with `next` pointing on."""
from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination


class CappedLimitOffsetPagination(LimitOffsetPagination):
    @property
    def max_limit(self) -> int:  # read per request, so the setting can change without a restart of tests
        return settings.API_MAX_PAGE_SIZE
