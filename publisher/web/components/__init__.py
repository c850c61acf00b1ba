"""Small UI building blocks shared by the pages."""
