# embed.awk - turn the shell hook scripts into a C table (shell_scripts.c):
# { "relative/name", "content" } for each file given, so the server can
# write them out without looking for data files.
BEGIN {
    print "/* Generated from src/shell/ by src/shell/embed.awk: do not edit. */"
    print "#include \"server/shellhook.h\""
    print "const shellhook_file shellhook_files[] = {"
    open = 0
}
FNR == 1 {
    if (open)
        print "    },"
    name = FILENAME
    sub(/.*src\/shell\//, "", name)
    printf "    {\"%s\",\n", name
    open = 1
}
{
    line = $0
    gsub(/\\/, "\\\\", line)
    gsub(/"/, "\\\"", line)
    printf "     \"%s\\n\"\n", line
}
END {
    if (open)
        print "    },"
    print "    {0, 0},"
    print "};"
}
