"""Settings for a rescue worker in tests: unacknowledged messages come back after 3 s, not an hour.

A worker killed outright (SIGKILL of its whole process group) cannot requeue what it held; Redis gives the
message to another worker once the visibility timeout passes. Production keeps hume.settings' hour.
"""
from hume.settings import *  # noqa: F403

CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3, "unacked_restore_interval": 1,
                                   "unacked_restore_throttle": 1}
