package io.kvindexer.indexer.common;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;

/**
 * What went wrong with a file, in words: the JDK's file exceptions carry only the path as their message ("cannot read
 * /etc/token: /etc/token"), so a log line or a flag error would not say why.
 */
public final class IoErrors {

    private IoErrors() {}

    /**
     * "no such file or directory", "permission denied", ..., else the exception's own message; followed by the path
     * that failed when it is not {@code named}, the one the caller's message already names.
     */
    public static String describe(IOException e, Path named) {
        String why = switch (e) {
            case NoSuchFileException x -> "no such file or directory";
            case AccessDeniedException x -> "permission denied";
            case NotDirectoryException x -> "not a directory";
            case DirectoryNotEmptyException x -> "a directory that is not empty";
            // the one place we create what may exist: Files.createDirectories, on a path that is a file
            case FileAlreadyExistsException x -> "exists and is not a directory";
            // the OS's words ("Read-only file system", "No space left on device"), in our lower case
            case FileSystemException x
            when x.getReason() != null && !x.getReason().isEmpty() ->
                Character.toLowerCase(x.getReason().charAt(0)) + x.getReason().substring(1);
            default -> e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        };
        return e instanceof FileSystemException f
                        && f.getFile() != null
                        && !f.getFile().equals(named.toString())
                ? why + " (" + f.getFile() + ")"
                : why;
    }
}
