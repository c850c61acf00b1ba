"""limits"""
