"""web/states"""
