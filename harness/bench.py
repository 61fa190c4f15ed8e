"""placeholder, being written"""
def register(sub):
    pass
