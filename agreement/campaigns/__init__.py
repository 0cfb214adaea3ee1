"""Campaigns: a task's human study that plans, hands out and stops itself at a target precision (docs/campaigns.md)."""
