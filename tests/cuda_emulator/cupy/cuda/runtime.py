"""`cupy.cuda.runtime` of the emulator."""


def getDeviceCount() -> int:
    return 1


def runtimeGetVersion() -> int:
    return 0
