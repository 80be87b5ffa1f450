"""Differential tests against independent reference implementations (pytrec_eval)."""
