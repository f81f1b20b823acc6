"""The kernel families, one module per op family, each with a `KERNELS` table
keyed by op class. They import `core` and `scalar`, never each other
(an import-linter contract)."""
